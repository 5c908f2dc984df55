# panda-model (issue 7): program, unit tests and benchmark.
