import ChimeCore
import ChimeDesktop
import Foundation

/// Starts the desktop's browser where there is a desktop: for `chime open`, and for the web
/// center's reply field when a desktop pop-up's text-input action is chosen.
package enum Browser {
    /// The opener to use (`xdg-open`, or `$BROWSER`), when a desktop session is present.
    package static func opener(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
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
    package static func launch(_ opener: String, url: String) -> Bool {
        // Reaped by its own thread whenever it ends.
        (try? ChildProcess(executable: "/usr/bin/env", arguments: [opener, url], stdin: .null, stdout: .null, stderr: .null)) != nil
    }
}
