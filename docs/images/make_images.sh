#!/usr/bin/env bash
# The pictures in docs/, made by rodsim's own commands (docs/render.md). From the repository
# root, in an environment with rodsim[movie]:  bash docs/images/make_images.sh [OUT_FOLDER]
set -euo pipefail
out=${1:-docs/images}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# a portal frame swaying under a gust: the bending moment, displacements x20, and the
# envelope of the beam's bending moment over the run
rodsim run inputs/frame/frame.yaml -q --no-vtk -o "$work/frame.h5"
rodsim render "$work/frame.h5" --field moment.bending3 --time 0.43 --scale 20 --reference --cmap coolwarm -o "$out/frame_moment.png"
rodsim plot "$work/frame.h5" moment.bending3@frame.beam --along --frames 86,-1 --envelope -o "$out/frame_beam_moment_along.png"

# the flying spaghetti: a movie coloured by speed, and its energies
rodsim run inputs/spaghetti/spaghetti.yaml -q --no-vtk --set solver.t_end=8 -o "$work/spaghetti.h5"
rodsim render "$work/spaghetti.h5" --field velocity --frames ::2 --size 480x360 --fps 15 -o "$out/spaghetti.gif"
rodsim plot "$work/spaghetti.h5" energy -o "$out/spaghetti_energy.png"

# a cantilever's third mode, animated over one period
rodsim run inputs/cantilever/cantilever.yaml -q --no-vtk --set solver.analysis=modal -o "$work/cantilever_modal.h5"
rodsim render "$work/cantilever_modal.h5" --mode 3 --view iso --size 480x360 -o "$out/cantilever_mode3.gif"

# a simply supported plate under pressure: its bending moment M11, deflections x20
rodsim run inputs/plate/ss_plate.yaml -q -o "$work/plate.h5"
rodsim render "$work/plate.h5" --field bending.M11 --view iso --scale 20 -o "$out/plate_bending.png"

# a cantilever's large static deflection, load step by load step
rodsim run inputs/cantilever_tip/cantilever_tip.yaml -q --no-vtk -o "$work/cantilever_tip.h5"
rodsim plot "$work/cantilever_tip.h5" moment.bending2@beam.all --along --frames 1,3,5 -o "$out/cantilever_tip_moment_along.png"
rodsim render "$work/cantilever_tip.h5" --field von_mises_max --reference -o "$out/cantilever_tip_stress.png"

# a sweep (docs/sweeps.md): the cantilever's tip deflection against its load and length
rodsim sweep docs/examples/sweeps/cantilever.yaml -q -o "$work/cantilever_sweep"
rodsim plot "$work/cantilever_sweep/summary.h5" tip --against "loads[0].force[2]" -o "$out/sweep_tip.png"
rodsim plot "$work/cantilever_sweep/summary.h5" tip --against "loads[0].force[2],mesh[0].rod.to[0]" -o "$out/sweep_tip_map.png"
