import CFuzzerDriver
import Foundation

// Hands the command line (corpus directories, -max_total_time=…, a crash file to replay) to libFuzzer.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzJSONRequest))
