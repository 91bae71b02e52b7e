import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the terminal the CLI writes to can show.
enum Terminal {
    /// Whether standard output is a terminal that draws Unicode half blocks (a QR code): a TTY,
    /// not `TERM=dumb`, in a UTF-8 locale.
    static var canDrawQRCodes: Bool {
        guard isatty(STDOUT_FILENO) == 1 else { return false }
        let environment = ProcessInfo.processInfo.environment
        if environment["TERM"] == nil || environment["TERM"] == "dumb" { return false }
        let locale = environment["LC_ALL"] ?? environment["LC_CTYPE"] ?? environment["LANG"] ?? ""
        return locale.uppercased().contains("UTF-8") || locale.uppercased().contains("UTF8")
    }
}
