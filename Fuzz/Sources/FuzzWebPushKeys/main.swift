import FuzzSupport

runFuzzer(fuzzWebPushKeys)
