import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let version = Command(
        name: "version", summary: "print chime's version and the commit it was built from",
        usage: "chime version (or chime --version)", examples: ["chime version", "chime --version"], options: [],
        run: { arguments, cli in
            if arguments.has("json") {
                cli.write(
                    JSONValue.object([
                        "version": .string(ChimeVersion.number), "commit": .string(ChimeBuildInfo.commit),
                    ]).serialized())
            } else {
                cli.write(CLI.versionLine)
            }
            return 0
        })
}
