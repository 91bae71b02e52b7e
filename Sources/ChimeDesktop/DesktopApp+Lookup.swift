import Foundation

extension DesktopApp {
    /// The app as the desktop knows it: from its desktop entry (`<bundle identifier>.desktop` in
    /// `$XDG_DATA_HOME/applications` or `$XDG_DATA_DIRS/applications`) its `Name` and `Icon`;
    /// without one, the bundle identifier and no icon.
    ///
    /// ```swift
    /// DesktopApp.lookup("org.gnome.Calendar")   // DesktopApp(displayName: "Calendar", icon: "org.gnome.Calendar", desktopEntry: "org.gnome.Calendar")
    /// DesktopApp.lookup("com.example.alarm")    // DesktopApp(displayName: "com.example.alarm")
    /// ```
    public static func lookup(
        _ bundleIdentifier: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> DesktopApp {
        guard !bundleIdentifier.isEmpty, !bundleIdentifier.contains("/") else {
            return DesktopApp(displayName: bundleIdentifier)
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init)
        for directory in [dataHome] + dataDirs {
            let path = "\(directory)/applications/\(bundleIdentifier).desktop"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let entry = desktopEntry(text)
            return DesktopApp(
                displayName: entry["Name"] ?? bundleIdentifier, icon: entry["Icon"], desktopEntry: bundleIdentifier)
        }
        return DesktopApp(displayName: bundleIdentifier)
    }

    /// The keys of a desktop file's `[Desktop Entry]` group (unlocalised values only).
    static func desktopEntry(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        var inEntry = false
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                inEntry = line == "[Desktop Entry]"
                continue
            }
            guard inEntry, !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if !key.contains("["), !value.isEmpty, values[key] == nil { values[key] = value }
        }
        return values
    }
}
