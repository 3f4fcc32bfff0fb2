import Foundation

/// What an error from Foundation or the system means, in one plain line: a user reads "permission
/// denied", not "The operation could not be completed. (NSCocoaErrorDomain error 513.)".
public func plainDescription(_ error: any Error) -> String {
    if let e = error as? POSIXError { return String(cString: strerror(e.code.rawValue)) }
    // Only Foundation's own errors are translated; the NVR's errors already say what happened.
    guard error is CocoaError || type(of: error) is NSError.Type else { return "\(error)" }
    let ns = error as NSError
    if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(truncatingIfNeeded: ns.code))) }
    if let u = ns.userInfo[NSUnderlyingErrorKey] as? NSError, u.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(truncatingIfNeeded: u.code)))
    }
    if ns.domain == NSCocoaErrorDomain {
        switch CocoaError.Code(rawValue: ns.code) {
        case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or folder"
        case .fileWriteOutOfSpace: return "no space left on the disk"
        case .fileWriteFileExists: return "a file of that name is in the way"
        case .fileWriteVolumeReadOnly: return "the disk is read-only"
        default: break
        }
    }
    // Foundation's text without its "(NSCocoaErrorDomain error 512.)" tail.
    let text = ns.localizedDescription
    if let cut = text.range(of: " (NS", options: .backwards) { return String(text[..<cut.lowerBound]) }
    return text
}

/// This build's version (`nvr --version`, the Debian package, the page's footer).
public enum NVRVersion {
    public static let current = "0.9.0"
}
