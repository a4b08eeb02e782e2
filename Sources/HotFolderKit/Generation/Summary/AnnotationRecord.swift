/// One annotation a person wrote, as the summary lists it and as
/// `<name>.annotations.json` records it.
public struct AnnotationRecord: Sendable, Codable, Equatable {
    /// 1-based page number in the original document.
    public var page: Int
    /// The PDF subtype without the slash: "Text", "Highlight", "FreeText", …
    public var type: String
    /// /T: who wrote it.
    public var author: String?
    /// /Subj
    public var subject: String?
    /// /M, else /CreationDate: ISO 8601 when the PDF date could be read,
    /// otherwise the text the PDF gave.
    public var date: String?
    /// /Contents
    public var text: String?
    /// /F, the PDF annotation flags.
    public var flags: Int?

    public init(page: Int, type: String, author: String? = nil, subject: String? = nil, date: String? = nil,
                text: String? = nil, flags: Int? = nil) {
        self.page = page
        self.type = type
        self.author = author
        self.subject = subject
        self.date = date
        self.text = text
        self.flags = flags
    }
}
