// triangles_only.geo -- unit square meshed with exactly 2 triangles, no line cells
// saved (only the surface is in a physical group; Gmsh saves only physical entities).
//
// Generated with Gmsh 4.15.2 (PyPI wheel `gmsh==4.15.2`), run in tests/data/meshes/:
//
//   gmsh -2 triangles_only.geo -format msh41 -o triangles_only.msh

Point(1) = {0, 0, 0, 1.0};
Point(2) = {1, 0, 0, 1.0};
Point(3) = {1, 1, 0, 1.0};
Point(4) = {0, 1, 0, 1.0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve {1, 2, 3, 4} = 2;   // 1 element per side
Transfinite Surface {1};              // structured: 1 quad cell split into 2 triangles
Physical Surface("square", 1) = {1};
