"""New-language versions: translation workflow, language packs, cross-lingual sets."""
