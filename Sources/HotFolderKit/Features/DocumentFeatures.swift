import Foundation

/// The document as a feature source: what its own permissions allow. Unlike
/// the other sources its answer never changes, so a "no" fails the job (with
/// the reason) instead of making it wait.
enum DocumentFeatures {
    static func availability(of destination: DestinationKind, format: FileFormat, facts: DocumentFacts) -> Availability {
        guard destination == .print, facts.type == .pdf, format != .original else { return .available }
        if !facts.allowPrint { return .unavailable("the PDF's permissions forbid printing") }
        return .available
    }
}
