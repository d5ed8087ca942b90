// duplicate_nodes.geo -- the L-frame of lframe.geo, but the two legs are separate
// curves whose end points are DISTINCT geometry points at the same coordinate
// (1,0,0), so the mesh has two coincident, unshared corner nodes. A reader must
// merge coincident nodes to connect the legs.
//
// Generated with Gmsh 4.15.2 (PyPI wheel `gmsh==4.15.2`), run in tests/data/meshes/:
//
//   gmsh -1 duplicate_nodes.geo -format msh41 -o duplicate_nodes.msh

Geometry.AutoCoherence = 0;   // do NOT merge the two coincident points

Point(1) = {0, 0, 0, 1.0};
Point(2) = {1, 0, 0, 1.0};   // end of leg_a
Point(3) = {1, 0, 0, 1.0};   // start of leg_b: same coordinates, separate point
Point(4) = {1, 1, 0, 1.0};

Line(1) = {1, 2};   // leg_a
Line(2) = {3, 4};   // leg_b

Transfinite Curve {1, 2} = 5;   // 4 elements per leg

Physical Curve("leg_a", 1) = {1};
Physical Curve("leg_b", 2) = {2};
Physical Point("root", 3) = {1};
