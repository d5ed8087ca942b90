// lframe.geo -- L-shaped frame of line cells for rodsim mesh-reader tests.
//
// Generated with Gmsh 4.15.2 (PyPI wheel `gmsh==4.15.2`), run in tests/data/meshes/:
//
//   gmsh -1 lframe.geo -format msh22 -o lframe_v2.msh    (MSH 2.2 ASCII)
//   gmsh -1 lframe.geo -format msh41 -o lframe_v4.msh    (MSH 4.1 ASCII)
//
// Legs: leg_a (0,0,0)->(1,0,0), leg_b (1,0,0)->(1,1,0), 4 elements each,
// sharing the corner node (1,0,0). Physical point "root" = node at (0,0,0).

Point(1) = {0, 0, 0, 1.0};
Point(2) = {1, 0, 0, 1.0};
Point(3) = {1, 1, 0, 1.0};

Line(1) = {1, 2};   // leg_a
Line(2) = {2, 3};   // leg_b

Transfinite Curve {1, 2} = 5;   // 5 nodes = 4 elements per leg

Physical Curve("leg_a", 1) = {1};
Physical Curve("leg_b", 2) = {2};
Physical Point("root", 3) = {1};
