"""The results writer; the format, writer and readers live in rodsim.results_format. This name
stays so that code importing the writer from here keeps working."""

from rodsim.results_format import LAYOUT, LAYOUT_MINOR, ResultsWriter

__all__ = ["LAYOUT", "LAYOUT_MINOR", "ResultsWriter"]
