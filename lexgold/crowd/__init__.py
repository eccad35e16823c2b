"""Real crowds (issue 33): what real rating logs say about raters, and what allocation saves
on them."""
