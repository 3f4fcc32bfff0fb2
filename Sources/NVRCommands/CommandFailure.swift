import ArgumentParser
import Foundation
import Logging
import NVRIndex

/// A failure reported as one line on stderr with exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ m: String) { description = m }
}
