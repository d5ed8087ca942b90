"""Meshes: generated rod parts and meshio-readable files, node and cell sets."""
