import FuzzSupport

runFuzzer(fuzzWebPushSubscription)
