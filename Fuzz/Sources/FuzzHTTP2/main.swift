import FuzzSupport

runFuzzer(fuzzHTTP2)
