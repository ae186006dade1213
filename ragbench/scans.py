"""Pages printed to images as a scanner gives them: grey, at a given resolution, turned by a slight skew and
softened by a slight blur, no text layer. The OCR benchmark (``ragbench.ocr``), the answer sets' scanned
documents (``ragbench.answers``) and the OCR tests render their scans here, so they measure the same thing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SKEW_DEG = 0.4  # a sheet laid a little crooked on the glass
BLUR_RADIUS = 0.6  # pixels of Gaussian blur: focus and paper


def scan_image(page: Any, dpi: int = 150, skew_deg: float = SKEW_DEG, blur: float = BLUR_RADIUS) -> Any:
    """A PDFium page -> a grey PIL image of it as scanned."""
    from PIL import Image, ImageFilter

    image = page.render(scale=dpi / 72).to_pil().convert("L")
    if skew_deg:
        image = image.rotate(skew_deg, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    return image.filter(ImageFilter.GaussianBlur(blur)) if blur else image


def save_image_pdf(images: list[Any], out: Path, dpi: int) -> Path:
    """``images`` as an image-only PDF at ``out``, written whole or not at all."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".part")
    images[0].save(partial, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    partial.replace(out)
    return out
