"""Numbers and units as the texts and the learners write them (:mod:`grader.units.quantities`:
the one reader shared by the answers and the claims; the whitelisted units in ``units.txt``)."""
