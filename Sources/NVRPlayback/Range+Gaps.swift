extension Range where Bound == Int64 {
    /// This span minus the `covered` ranges (any order), keeping pieces of at least `minimum`:
    /// what a card holds that was not recorded, what the timeline shows as on the camera only.
    public func gaps(covered: [Range<Int64>], minimum: Int64) -> [Range<Int64>] {
        var out: [Range<Int64>] = []
        var cursor = lowerBound
        for c in covered.sorted(by: { $0.lowerBound < $1.lowerBound }) where c.upperBound > cursor {
            if c.lowerBound > cursor { out.append(cursor..<Swift.min(c.lowerBound, upperBound)) }
            cursor = Swift.max(cursor, c.upperBound)
            if cursor >= upperBound { break }
        }
        if cursor < upperBound { out.append(cursor..<upperBound) }
        return out.filter { $0.count >= minimum }
    }
}
