"""Scaling projection (`dlscale project`): from a calibration campaign's measured kernels,
training profiles and collectives to a site's published scale. docs/projection.md."""
