import FuzzSupport

runFuzzer(fuzzLinkHeader)
