import FuzzSupport

runFuzzer(fuzzJWT)
