import FuzzSupport

runFuzzer(fuzzSendHeaders)
