"""rodsim: structure-preserving finite elements for geometrically exact rods and plates."""

__version__ = "0.1.0"
