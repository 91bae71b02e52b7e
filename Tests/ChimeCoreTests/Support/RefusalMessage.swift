import ChimeCore

/// The message of what `body` throws (a `ChimeError`'s or an `APNsPayloadError`'s), or nil when it
/// throws nothing: for comparing two ways to the same refusal.
func refusalMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as ChimeError {
        return error.message
    } catch let error as APNsPayloadError {
        return error.message
    } catch {
        return "\(error)"
    }
}
