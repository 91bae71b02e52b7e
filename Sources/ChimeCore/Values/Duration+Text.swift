import Foundation

/// Durations as people write them — `90s`, `10m`, `1h30m`, `2d`, `1w` — for the CLI's `--in` and
/// `--every` and the one-line send's `Delay` header.
///
/// ```swift
/// try DurationText.seconds(in: "1h30m")   // 5400
/// ```
public enum DurationText {
    /// The seconds `text` stands for. A number needs its unit (`10` alone could mean seconds or
    /// minutes) unless `bareSeconds` says a bare number is seconds.
    ///
    /// - Throws: ``ChimeError`` `invalidValue` naming `field`, with examples.
    public static func seconds(in text: String, field: String, bareSeconds: Bool = false) throws(ChimeError)
        -> TimeInterval
    {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = TimeInterval(trimmed), number.isFinite {
            guard bareSeconds else {
                throw ChimeError(
                    .invalidValue, field: field,
                    "'\(text)' has no unit; write \(trimmed)s for seconds (or \(trimmed)m, \(trimmed)h, \(trimmed)d)")
            }
            return number
        }
        let failure = ChimeError(
            .invalidValue, field: field, "'\(text)' is not a duration; write e.g. 90s, 10m, 1h30m, 2d")
        var total: TimeInterval = 0
        var number = ""
        var sawUnit = false
        for character in trimmed {
            if character.isNumber || character == "." {
                number.append(character)
                continue
            }
            let unit: TimeInterval
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86_400
            case "w": unit = 604_800
            default: throw failure
            }
            guard let value = TimeInterval(number), value.isFinite else { throw failure }
            total += value * unit
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit, total.isFinite else { throw failure }
        return total
    }
}
