// frame.geo -- planar portal frame in the x-z plane (rodsim example input)
//
// frame.msh was generated from this file with Gmsh 4.15.2 (PyPI wheel `gmsh==4.15.2`):
//
//   gmsh -1 frame.geo -format msh41 -o frame.msh
//
// (run in inputs/frame/; -1 = 1D meshing only; MSH 4.1 ASCII is the default
// for -format msh41). Only entities in physical groups are saved (Gmsh default
// Mesh.SaveAll = 0), so every element belongs to a physical group.
//
// Geometry: two columns of height 4, beam of span 5 on top.
//   columns: (0,0,0)->(0,0,4) and (5,0,0)->(5,0,4), 8 elements each
//   beam:    (0,0,4)->(5,0,4), 10 elements
// Physical groups:
//   curves "columns" (both columns), "beam"
//   points "base" (both bottom points), "corner_left" (0,0,4), "corner_right" (5,0,4)

H = 4.0;   // column height
L = 5.0;   // beam span

Point(1) = {0, 0, 0, 1.0};
Point(2) = {0, 0, H, 1.0};
Point(3) = {L, 0, 0, 1.0};
Point(4) = {L, 0, H, 1.0};

Line(1) = {1, 2};   // left column  (bottom -> top)
Line(2) = {3, 4};   // right column (bottom -> top)
Line(3) = {2, 4};   // beam         (left -> right)

// Transfinite Curve takes the number of NODES: n elements -> n+1 nodes
Transfinite Curve {1, 2} = 9;    // 8 elements per column
Transfinite Curve {3} = 11;      // 10 elements on the beam

Physical Curve("columns", 1) = {1, 2};
Physical Curve("beam", 2) = {3};
Physical Point("base", 3) = {1, 3};
Physical Point("corner_left", 4) = {2};
Physical Point("corner_right", 5) = {4};
