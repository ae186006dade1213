"""Generate the binary demo files (.pdf, .docx) and the binary parser fixtures.

Writes:
  data/demo/lumen_v2_pro_manual.pdf      English V2 Pro user manual, 4 pages
  data/demo/warranty_policy_zh.docx      Chinese warranty policy with Word "Heading 1/2" styles
  tests/fixtures/sample.pdf              2 pages, one sentence each
  tests/fixtures/blank.pdf               valid 1-page PDF with no text
  tests/fixtures/corrupt.pdf             random bytes (seeded) with a .pdf name
  tests/fixtures/sample.docx             headings, paragraphs and a 2-row table
  tests/fixtures/sample_gbk.txt          Chinese text encoded in GBK
  tests/fixtures/empty.txt               0 bytes

The text files of the demo (.md, .txt, .html) are written by hand and live next to these.
Uses only the standard library, python-docx, and a minimal PDF writer below (Helvetica, base-14,
so the PDF text must be plain ASCII). Output is deterministic: running it twice gives the same bytes.

Run from anywhere:  python scripts/make_demo_files.py
"""

from __future__ import annotations

import datetime as dt
import io
import random
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
FIXTURES = ROOT / "tests" / "fixtures"

# --------------------------------------------------------------------------------------------
# Minimal PDF writer
# --------------------------------------------------------------------------------------------

PAGE_W, PAGE_H = 612, 792  # US Letter, points
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 64, 72, 64
WRAP = 84  # characters per body line at 10.5 pt Helvetica (about 460 pt of 484 available)


def _pdf_string(text: str) -> bytes:
    """A PDF literal string. Only printable ASCII: base-14 fonts have no CJK glyphs."""
    if any(not (32 <= ord(ch) < 127) for ch in text):
        raise ValueError(f"PDF text must be printable ASCII: {text!r}")
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("ascii") + b")"


# A page is a list of (style, text) lines; style is "title", "h", "body", "blank" or "footer".
Line = tuple[str, str]
STYLE = {  # font resource, size, leading
    "title": (b"/F2", 18, 26),
    "h": (b"/F2", 12.5, 20),
    "body": (b"/F1", 10.5, 14),
    "blank": (b"/F1", 10.5, 8),
}


def _content_stream(lines: list[Line], footer: str | None) -> bytes:
    """One BT..ET block per line at absolute positions: extractors see clean, separate lines."""
    out: list[bytes] = []
    y = PAGE_H - MARGIN_TOP
    for style, text in lines:
        font, size, leading = STYLE[style]
        if style != "blank" and text:
            out.append(
                b"BT %s %s Tf 1 0 0 1 %d %.1f Tm %s Tj ET" % (font, str(size).encode(), MARGIN_X, y, _pdf_string(text))
            )
        y -= leading
        if y < MARGIN_BOTTOM:
            raise ValueError("page overflow; move text to another page")
    if footer:
        out.append(b"BT /F1 9 Tf 1 0 0 1 %d %d Tm %s Tj ET" % (MARGIN_X, 36, _pdf_string(footer)))
    return b"\n".join(out) + b"\n"


def write_pdf(path: Path, pages: list[list[Line]], title: str, footers: bool = True) -> None:
    """Write a PDF: catalog, page tree, two Type1 fonts, one content stream per page, info, xref."""
    n = len(pages)
    # object numbers: 1 catalog, 2 pages, 3 F1, 4 F2, 5 info, then (page, content) pairs
    objects: dict[int, bytes] = {}
    page_ids = [6 + 2 * i for i in range(n)]
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids = b" ".join(b"%d 0 R" % pid for pid in page_ids)
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n)
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    objects[4] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
    objects[5] = b"<< /Title %s /Producer (ragapp make_demo_files.py) /CreationDate (D:20240601000000Z) >>" % (
        _pdf_string(title)
    )
    for i, lines in enumerate(pages):
        pid, cid = page_ids[i], page_ids[i] + 1
        footer = f"{title} - Page {i + 1} of {n}" if footers else None
        stream = _content_stream(lines, footer)
        objects[pid] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] "
            b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>" % (PAGE_W, PAGE_H, cid)
        )
        objects[cid] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream"

    buf = io.BytesIO()
    buf.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for num in sorted(objects):
        offsets[num] = buf.tell()
        buf.write(b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n")
    xref_at = buf.tell()
    size = max(objects) + 1
    buf.write(b"xref\n0 %d\n" % size)
    buf.write(b"0000000000 65535 f \n")
    for num in range(1, size):
        buf.write(b"%010d 00000 n \n" % offsets[num])
    buf.write(b"trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref_at))
    path.write_bytes(buf.getvalue())


def page(*blocks: tuple[str, str]) -> list[Line]:
    """Build a page from (style, text) blocks; body text is wrapped, '\\n' forces a new line."""
    lines: list[Line] = []
    for style, text in blocks:
        if style == "body":
            for para in text.split("\n"):
                wrapped = textwrap.wrap(para, WRAP, subsequent_indent="   " if para.startswith("- ") else "")
                lines.extend(("body", w) for w in wrapped or [""])
        else:
            lines.append((style, text))
    return lines


# --------------------------------------------------------------------------------------------
# Demo: Lumen V2 Pro user manual (English PDF, 4 pages)
# --------------------------------------------------------------------------------------------

V2_PRO_MANUAL = [
    page(
        ("title", "Lumen V2 Pro Robot Vacuum - User Manual"),
        ("body", "Model: LR-V2P | Manual version 1.3 | Lumen Robotics Co., Ltd."),
        ("blank", ""),
        ("h", "1. About the Lumen V2 Pro"),
        (
            "body",
            "The Lumen V2 Pro is a robot vacuum and mop with LiDAR navigation and a self-empty dock. "
            "It maps your home on the first run, saves up to 4 floor maps, and cleans room by room. "
            "Please read this manual before first use and keep it for future reference.",
        ),
        ("blank", ""),
        ("h", "2. Specifications"),
        (
            "body",
            "- Suction power: 5000 Pa (Max mode)\n"
            "- Battery: 14.4 V, 5200 mAh lithium-ion battery pack, part no. LB-5200\n"
            "- Runtime: up to 180 minutes in Quiet mode, about 110 minutes in Standard mode\n"
            "- Charging time: about 4.5 hours from empty to full\n"
            "- Robot dustbin: 400 ml\n"
            "- Self-empty dock dust bag: 3 litres, holds roughly 60 days of dust\n"
            "- Water tank: 250 ml, with 3 water-flow levels\n"
            "- Navigation: LiDAR laser distance sensor plus 3D structured-light obstacle avoidance\n"
            "- Maximum threshold height it can climb: 20 mm\n"
            "- Noise: 62 dB in Standard mode\n"
            "- Weight: 3.9 kg; size: 350 x 350 x 96 mm\n"
            "- Wi-Fi: 2.4 GHz only (5 GHz networks are not supported)\n"
            "- Operating temperature: 0 to 40 degrees Celsius",
        ),
        ("blank", ""),
        ("h", "3. What is in the box"),
        (
            "body",
            "Robot, self-empty dock (CD-V2), power cord, 1 spare side brush, 1 spare HEPA filter, "
            "2 mop pads, 1 spare dust bag, cleaning tool, quick start card and this manual.",
        ),
    ),
    page(
        ("h", "4. Setting up the dock"),
        (
            "body",
            "Place the self-empty dock on a hard, level floor against a wall. Keep 0.5 m of free space "
            "on each side of the dock and 1.5 m in front of it. Plug in the power cord and hide "
            "surplus cable so the robot cannot catch it. Avoid direct sunlight on the dock sensor window.",
        ),
        ("blank", ""),
        ("h", "5. First use and app pairing"),
        (
            "body",
            "Charge the robot fully before the first run (the light ring turns solid white when full). "
            "To connect to the Lumen app, press and hold the Home and Power buttons together for 3 seconds "
            "until the light ring blinks blue, then follow the steps in the app. "
            "The first run is a mapping run; do not move the dock afterwards or the map may be lost.",
        ),
        ("blank", ""),
        ("h", "6. Cleaning modes"),
        (
            "body",
            "Quiet, Standard, Turbo and Max suction levels are available. Carpet Boost raises suction to "
            "Max automatically on carpet. When mop pads are attached, the robot lifts the mop by 7 mm "
            "when it reaches a carpet. Scheduled cleaning, no-go zones and virtual walls are set in the app.",
        ),
        ("blank", ""),
        ("h", "7. Maintenance schedule"),
        (
            "body",
            "- Main brush (MB-210): remove hair weekly; replace every 6 to 12 months.\n"
            "- Side brush (SB-030): replace every 3 to 6 months.\n"
            "- HEPA filter (HF-020): tap clean every 2 weeks; replace every 3 months. Do not wash it.\n"
            "- Mop pads (MP-110): wash after each use; replace every 3 months.\n"
            "- Dock dust bag (DB-300): replace when the app reports it full, about every 60 days.\n"
            "- Cliff sensors and LiDAR window: wipe with a dry soft cloth once a month.\n"
            "- Charging contacts on robot and dock: wipe once a month.",
        ),
        ("blank", ""),
        (
            "body",
            "If the robot will not be used for more than 1 month, charge it to full, switch it off and "
            "store it in a cool, dry place. Recharge it at least every 3 months to protect the battery.",
        ),
    ),
    page(
        ("h", "8. Troubleshooting and error codes"),
        (
            "body",
            "When a fault occurs, the light ring flashes red, the robot announces the error and the app "
            "shows an error code. Fix the cause, then press Power to resume.",
        ),
        ("blank", ""),
        (
            "body",
            "- E01 LiDAR cover stuck or blocked: press the LiDAR cover gently and remove anything on top of it.\n"
            "- E02 Side brush tangled: remove the side brush and clear hair or string.\n"
            "- E03 Main brush tangled: open the brush guard and clean the main brush and its end caps.\n"
            "- E05 Drive wheel stuck: lift the robot, clear debris from the wheels, check that they turn freely.\n"
            "- E07 Cliff sensor error: the cliff sensors are dirty or the robot is on a very dark carpet. "
            "Wipe the 4 cliff sensors under the robot with a dry cloth.\n"
            "- E09 Robot trapped: move the robot to open floor and add a no-go zone in the app.\n"
            "- E12 Battery temperature abnormal: charge and run the robot only between 0 and 40 degrees Celsius. "
            "If E12 keeps appearing at normal room temperature, the battery pack (LB-5200) is worn out and "
            "must be replaced; contact Lumen customer service.\n"
            "- E15 Dock communication failure: clean the charging contacts and check that the dock is powered.",
        ),
        ("blank", ""),
        ("h", "Other problems"),
        (
            "body",
            "- The robot cannot connect to Wi-Fi: it supports 2.4 GHz networks only. Move the router closer "
            "or enable a 2.4 GHz band with a name separate from the 5 GHz band.\n"
            "- The dock does not empty the dustbin: check that the dust bag DB-300 is installed and not full, "
            "and that the suction port at the back of the dustbin is not blocked.\n"
            "- Runtime is much shorter than usual: clean the filter and brushes first. If runtime stays below "
            "60 minutes in Standard mode, the battery has lost capacity.\n"
            "- The robot leaves water streaks: lower the water-flow level or wash the mop pads.",
        ),
        ("blank", ""),
        (
            "body",
            "Firmware updates are delivered through the Lumen app. Keep the robot on the dock during an update.",
        ),
    ),
    page(
        ("h", "9. Parts and accessories"),
        (
            "body",
            "Use only genuine Lumen parts. The list below gives each part number and whether the part is a "
            "consumable (it wears out through normal use and is replaced regularly) or a durable component.",
        ),
        ("blank", ""),
        (
            "body",
            "- LB-5200: battery pack, 14.4 V 5200 mAh. Durable component - the battery is NOT a consumable.\n"
            "- CD-V2: self-empty charging dock. Durable component.\n"
            "- MB-210: main brush (rubber and bristle). Consumable.\n"
            "- SB-030: side brush. Consumable.\n"
            "- HF-020: HEPA filter. Consumable.\n"
            "- MP-110: washable mop pad. Consumable.\n"
            "- DB-300: dock dust bag, 3 litres. Consumable.",
        ),
        ("blank", ""),
        (
            "body",
            "Warranty periods for durable components and consumables are set out in the Lumen Warranty "
            "Policy. Accessory kits can be ordered in the Lumen app and the official online store.",
        ),
        ("blank", ""),
        ("h", "10. Safety information"),
        (
            "body",
            "- Use only the supplied dock and power cord (input 100-240 V, 50/60 Hz).\n"
            "- Do not use the robot outdoors, on wet floors, or to pick up burning or sharp objects.\n"
            "- Block off stairs the robot cannot detect, such as stairs with glass or mirrored edges.\n"
            "- Pick up loose cables, socks and curtain cords before cleaning.\n"
            "- Do not open the battery pack. Dispose of old batteries at a recycling point.\n"
            "- Children must not play with the robot or the dock.",
        ),
        ("blank", ""),
        (
            "body",
            "Lumen Robotics Co., Ltd., Hangzhou, China. This manual may be updated without notice; the latest "
            "version is available in the Lumen app.",
        ),
    ),
]

# --------------------------------------------------------------------------------------------
# Demo: warranty policy (Chinese Word document)
# --------------------------------------------------------------------------------------------

# ("h1"|"h2"|"p"|"li", text)
WARRANTY_POLICY_ZH = [
    ("h1", "流明机器人产品保修政策"),
    (
        "p",
        "本政策自 2024 年 1 月 1 日起生效，适用于在中国大陆通过流明官方商城、流明 App 及授权经销商购买的流明 V1 扫地机器人、流明 V2 Pro 扫拖机器人和 Glide W3 擦窗机器人。",
    ),
    ("h2", "一、保修期限"),
    ("p", "流明对以下部件在正常使用条件下出现的非人为性能故障提供免费保修："),
    ("li", "整机（主机、电机、主板、传感器）：V1 和 V2 Pro 为 24 个月；Glide W3 擦窗机器人为 12 个月。"),
    ("li", "电池和充电座等耐用部件：12 个月。"),
    ("li", "耗材（主刷、边刷、滤网、拖布、集尘袋、擦窗抹布）：3 个月，仅限材料或制造缺陷，正常磨损不在保修范围内。"),
    ("p", "保修期内维修后更换的部件，享有 90 天保修或原剩余保修期，以两者中较长者为准。"),
    ("h2", "二、保修期的起算"),
    (
        "p",
        "保修期自发票开具之日起计算。无法提供发票的，以产品出厂日期后第 90 天作为保修起始日。产品序列号印在尘盒下方的铭牌上（擦窗机器人在机身背面）。",
    ),
    ("h2", "三、不在保修范围内的情况"),
    ("li", "因跌落、挤压、进液（水箱和拖布正常使用除外）等造成的人为损坏。"),
    ("li", "经非流明授权的机构或个人拆修、改装。"),
    ("li", "使用非原装电池、充电器或配件导致的故障。"),
    ("li", "产品外观的正常磨损、划痕和褪色。"),
    ("p", "用于酒店、办公室等商业场所的产品，整机和电池保修期均按上述期限的一半计算。"),
    ("h2", "四、如何申请保修"),
    ("p", "第一步：通过流明 App 的“售后服务”页面或拨打客服热线提交保修申请（热线号码见《配送与退换货常见问题》）。"),
    ("p", "第二步：提供订单号、产品序列号和故障描述，必要时上传照片或视频。"),
    (
        "p",
        "第三步：按客服提供的地址寄修。保修期内往返运费由流明承担，请使用顺丰到付寄出。维修中心收到产品后 7 个工作日内完成维修并寄回。",
    ),
    ("p", "如维修后 30 天内同一故障再次出现，可申请更换同型号新机。"),
    ("h2", "五、保外维修收费标准"),
    ("p", "超出保修期或不属于保修范围的维修按以下标准收费（含税）："),
    ("li", "检测费：50 元；如用户确认维修，检测费免收。"),
    ("li", "人工费：每次 80 元。"),
    ("li", "V2 Pro 电池更换：399 元（含电池和人工）。"),
    ("li", "V1 电池更换：259 元（含电池和人工）。"),
    ("li", "V2 Pro 激光雷达模块更换：460 元；V1 主板更换：320 元。"),
    ("p", "保外维修更换的部件享有 90 天保修。"),
    ("h2", "六、其他"),
    (
        "p",
        "本政策由流明机器人有限公司负责解释。如本政策与《流明安心服务协议》（Lumen Care Plus）的约定不一致，以服务协议为准。",
    ),
]


def _fixed_core_properties(document, title: str) -> None:
    when = dt.datetime(2024, 6, 1, 0, 0, 0)
    props = document.core_properties
    props.title = title
    props.author = "Lumen Robotics"
    props.last_modified_by = "Lumen Robotics"
    props.created = when
    props.modified = when
    props.revision = 1


def _save_docx_deterministic(document, path: Path) -> None:
    """python-docx stamps zip entries with the current time; rewrite them with a fixed date."""
    raw = io.BytesIO()
    document.save(raw)
    raw.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2024, 6, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, src.read(info.filename))
    path.write_bytes(out.getvalue())


def _set_east_asian_font(document, font_name: str) -> None:
    """So Word shows the Chinese text in a CJK font (the default template names none)."""
    from docx.oxml.ns import qn

    for style_name in ("Normal", "Heading 1", "Heading 2", "List Bullet"):
        style = document.styles[style_name]
        rpr = style.element.get_or_add_rPr()
        rfonts = rpr.find(qn("w:rFonts"))
        if rfonts is None:
            rfonts = rpr.makeelement(qn("w:rFonts"), {})
            rpr.append(rfonts)
        rfonts.set(qn("w:eastAsia"), font_name)


def make_warranty_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    _set_east_asian_font(document, "Microsoft YaHei")
    for kind, text in WARRANTY_POLICY_ZH:
        if kind == "h1":
            document.add_heading(text, level=1)
        elif kind == "h2":
            document.add_heading(text, level=2)
        elif kind == "li":
            document.add_paragraph(text, style="List Bullet")
        else:
            document.add_paragraph(text)
    _fixed_core_properties(document, "流明机器人产品保修政策")
    _save_docx_deterministic(document, path)


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------

FIXTURE_PDF_PAGES = ["Page one talks about apples.", "Page two talks about bananas."]

GBK_TEXT = (
    "这是一个使用GBK编码保存的中文测试文件，不是UTF-8。\n"
    "流明机器人的总部位于杭州，主要产品是家用扫地机器人。\n"
    "解析器应当正确识别编码，并完整读出这三行文字。\n"
)


def make_sample_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Installation", level=1)
    document.add_paragraph("Download the installer and run it with administrator rights.")
    document.add_heading("Requirements", level=2)
    document.add_paragraph("The application needs a 64-bit operating system and 8 GB of memory.")
    table = document.add_table(rows=2, cols=2)
    table.style = "Table Grid"
    for r, row in enumerate([("Component", "Version"), ("Python", "3.11")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    _fixed_core_properties(document, "Sample document")
    _save_docx_deterministic(document, path)


def make_fixtures() -> list[Path]:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    p = FIXTURES / "sample.pdf"
    write_pdf(p, [[("body", s)] for s in FIXTURE_PDF_PAGES], title="Sample PDF", footers=False)
    written.append(p)

    p = FIXTURES / "blank.pdf"
    write_pdf(p, [[]], title="Blank PDF", footers=False)
    written.append(p)

    p = FIXTURES / "corrupt.pdf"
    p.write_bytes(b"NOTAPDF" + random.Random(20240601).randbytes(2041))
    written.append(p)

    p = FIXTURES / "sample.docx"
    make_sample_docx(p)
    written.append(p)

    p = FIXTURES / "sample_gbk.txt"
    p.write_bytes(GBK_TEXT.encode("gbk"))
    written.append(p)

    p = FIXTURES / "empty.txt"
    p.write_bytes(b"")
    written.append(p)
    return written


def make_demo() -> list[Path]:
    DEMO.mkdir(parents=True, exist_ok=True)
    pdf = DEMO / "lumen_v2_pro_manual.pdf"
    write_pdf(pdf, V2_PRO_MANUAL, title="Lumen V2 Pro User Manual")
    docx_path = DEMO / "warranty_policy_zh.docx"
    make_warranty_docx(docx_path)
    return [pdf, docx_path]


def main() -> None:
    for path in make_demo() + make_fixtures():
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
