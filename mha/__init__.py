"""mha: a real multi-head attention, and measurements of it."""
