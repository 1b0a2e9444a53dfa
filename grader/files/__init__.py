"""Reading and writing files safely: bounded reads of regular files (:mod:`grader.files.textfiles`),
YAML and JSON with positions (:mod:`grader.files.yamlio`), an ``--output`` checked before a long run
(:mod:`grader.files.output`), and where the bundled spec and exercises live
(:mod:`grader.files.bundled`)."""
