"""The rating app: Flask studies served to crowd raters."""
