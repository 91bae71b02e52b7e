import FuzzSupport

runFuzzer(fuzzRecurrenceRule)
