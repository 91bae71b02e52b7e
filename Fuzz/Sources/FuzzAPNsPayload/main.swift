import FuzzSupport

runFuzzer(fuzzAPNsPayload)
