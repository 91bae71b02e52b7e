extension OptionSet where RawValue == UInt, Element == Self {
    /// The names of the members set, from a `names` table.
    public func names(from table: [(String, Self)]) -> [String] {
        table.filter { contains($0.1) && $0.1.rawValue != 0 }.map(\.0)
    }
}
