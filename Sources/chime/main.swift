import ChimeCLI
import Foundation

// `chime`: the command-line tool and daemon. Exit codes: 0 ok, 1 failed, 2 usage.
exit(await CLI().main(Array(CommandLine.arguments.dropFirst())))
