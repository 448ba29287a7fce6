"""Tools that keep the docs honest: the example runner (`examples`) and the link checker (`links`)."""
