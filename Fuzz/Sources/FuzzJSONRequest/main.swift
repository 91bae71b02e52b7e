import FuzzSupport

runFuzzer(fuzzJSONRequest)
