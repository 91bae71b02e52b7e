import FuzzSupport

runFuzzer(fuzzConfigFile)
