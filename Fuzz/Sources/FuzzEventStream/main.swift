import FuzzSupport

runFuzzer(fuzzEventStream)
