import FuzzSupport

runFuzzer(fuzzPercentEncoding)
