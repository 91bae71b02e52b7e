import Foundation

/// Starts the desktop's browser for `chime open`, where there is a desktop.
enum Browser {
    /// The opener to use (`xdg-open`, or `$BROWSER`), when a desktop session is present.
    static func opener(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let hasDesktop = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        if let browser = environment["BROWSER"], !browser.isEmpty, hasDesktop { return browser }
        guard hasDesktop else { return nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/xdg-open") {
            return "\(directory)/xdg-open"
        }
        return nil
    }

    /// Starts `opener url` without waiting for it; false when it could not start.
    static func launch(_ opener: String, url: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [opener, url]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        return true
    }
}

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
