import FuzzSupport

runFuzzer(fuzzAPNsHeaders)
