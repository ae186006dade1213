"""The boilerplate detector on hand-written pages: what it must flag, and near misses it must leave alone."""

from __future__ import annotations

import pytest

from ragapp.ingest.boilerplate import boilerplate_reason

TOC_WITH_LEADERS = """Contents
1 Getting started . . . . . . . . . . . . 1
1.1 Unpacking the robot . . . . . . . . . 2
1.2 Charging the battery . . . . . . . . . 4
2 Cleaning modes ........................ 7
3 Maintenance ........................... 15
Licence ................................. 31
"""

TOC_WITHOUT_TITLE = """1 Getting started . . . . . . . . . . . . 1
1.2 Charging the battery . . . . . . . . . 4
2 Cleaning modes ........................ 7
3 Maintenance ........................... 15
"""

# Leaders drawn as graphics: pypdf gives "title page" lines with rising page numbers and no title.
TOC_WITHOUT_LEADERS = """Safety instructions 3
Unpacking the robot 5
Charging the battery 6
Cleaning modes 9
Scheduling 12
Maintenance 15
Troubleshooting 19
Specifications 24
"""

TOC_ZH = """目录
第一章 产品概述……………………1
第二章 安装与充电……………………5
2.1 充电座的放置 ·········· 6
第三章 清扫模式……………………9
第四章 保养与维护……………………15
"""

INDEX_TITLED = """Index
A
Alarm, 12
Auto mode, 9, 14
B
Battery, 6, 24-25
Brush roll 16
Bumper, see also Sensors
C
Charging dock, 5, 6
"""

INDEX_CONTINUED = """Mopping pad, 10, 17
Noise level, 24
Obstacle sensor, 18, 19
Power button, 3
Remote control, 11, 13
Scheduling, 12
Side brush, 15, 16
Water tank, 10
"""

INDEX_ZH = """索引
充电座，5，6
电池，6、24
滚刷，16
遥控器，11，13
水箱，10
"""

GFDL = """GNU Free Documentation License
Version 1.3, 3 November 2008
Copyright (C) 2000, 2001, 2002, 2007, 2008 Free Software Foundation, Inc.
Everyone is permitted to copy and distribute verbatim copies of this license document, but changing it
is not allowed.
0. PREAMBLE
The purpose of this License is to make a manual, textbook, or other functional and useful document
"free" in the sense of freedom: to assure everyone the effective freedom to copy and redistribute it,
with or without modifying it, either commercially or noncommercially. Secondarily, this License
preserves for the author and publisher a way to get credit for their work, while not being considered
responsible for modifications made by others.
This License is a kind of "copyleft", which means that derivative works of the document must themselves
be free in the same sense. It complements the GNU General Public License, which is a copyleft license
designed for free software.
"""

# A later page of the FDL: it no longer names the licence, but its vocabulary is its own.
GFDL_LATER_PAGE = """You may add a section Entitled "Endorsements", provided it contains nothing but endorsements of
your Modified Version by various parties. You may add a passage of up to five words as a Front-Cover Text,
and a passage of up to 25 words as a Back-Cover Text, to the end of the list of Cover Texts in the Modified
Version. The author(s) and publisher(s) of the Document do not by this License give permission to use their
names for publicity for or to assert or imply endorsement of any Modified Version.
"""

GPL = """This program is free software; you can redistribute it and/or modify it under the terms of the GNU
General Public License as published by the Free Software Foundation; either version 2 of the License, or
(at your option) any later version.
This program is distributed in the hope that it will be useful, but WITHOUT ANY WARRANTY; without even
the implied warranty of MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the GNU General Public
License for more details.
You should have received a copy of the GNU General Public License along with this program.
"""

LGPL = """GNU LESSER GENERAL PUBLIC LICENSE
Version 3, 29 June 2007
This version of the GNU Lesser General Public License incorporates the terms and conditions of version 3
of the GNU General Public License, supplemented by the additional permissions listed below.
"""

TITLE_PAGE_WITH_NOTICE = """Lumen V2 Pro User Manual
The Lumen V2 Pro is a robot vacuum for homes up to 200 square metres. It maps each room with its laser
sensor on the first run and then cleans in straight lanes, returning to its dock when the battery runs low.
This manual explains how to unpack and charge the robot, choose a cleaning mode, plan a schedule in the
app, empty the dust bin, replace the brushes and filters, and what the status lights mean. Read the safety
instructions before the first use, and keep the manual for later reference. Questions about the robot go
to our support team, who answer within two working days.
Copyright (c) 2024 Lumen Robotics. Permission is granted to copy, distribute and/or modify this document
under the terms of the GNU Free Documentation License, Version 1.3.
"""

PROSE_ABOUT_AN_INDEX = """Index
The cleaning index shows how much of the floor was covered on the last run. An index of 90 means nine
tenths of the mapped area was cleaned. The app shows the index next to the map, and a low index usually
means a door was closed or the robot got stuck under furniture. Open the doors and run it again.
"""

SPEC_TABLE = """Specifications
Suction power (Pa) 2700
Battery capacity (mAh) 5200
Runtime (minutes) 180
Dust bin (ml) 400
Noise level (dB) 65
Weight (kg) 3
Charging time (hours) 4
"""

NUMBERED_STEPS = """To pair the robot, open the app and follow these steps in order, which take about 2
minutes. First hold the power button for 3 seconds until the light blinks, then choose Add device in the app
and scan the code under the lid. The robot beeps twice when it has joined your network on channel 1
or 6, and the light turns solid. If it does not, restart the router and repeat from step 1.
"""

PRICE_LIST = """Spare parts
Side brush, 12
Main brush, 25
HEPA filter, 18
Mop pad, 9
Dust bag, 15
"""

CHINESE_CONTENT = """第二章 安装与充电
将充电座靠墙放置，两侧各留出0.5米、前方留出1.5米的空间。首次使用前请将机器人充满电，约需4小时。
充电时指示灯闪烁，充满后常亮。本手册的目录见第1页。
"""


@pytest.mark.parametrize(
    ("text", "heading", "reason"),
    [
        (TOC_WITH_LEADERS, None, "table of contents"),
        (TOC_WITHOUT_TITLE, None, "table of contents"),
        (TOC_WITHOUT_LEADERS, None, "table of contents"),
        (TOC_ZH, None, "table of contents"),
        ("Getting started 1\nCharging 4\nCleaning modes 7\n", "Manual > Contents", "table of contents"),
        (INDEX_TITLED, None, "index"),
        (INDEX_CONTINUED, None, "index"),
        (INDEX_ZH, None, "index"),
        (GFDL, None, "licence text (GNU FDL)"),
        (GFDL_LATER_PAGE, None, "licence text (GNU FDL)"),
        (GPL, None, "licence text (GNU GPL)"),
        (LGPL, None, "licence text (GNU LGPL)"),
    ],
    ids=[
        "toc",
        "toc-untitled",
        "toc-no-leaders",
        "toc-zh",
        "toc-heading",
        "index",
        "index-cont",
        "index-zh",
        "gfdl",
        "gfdl-later",
        "gpl",
        "lgpl",
    ],
)
def test_flags_boilerplate_with_its_reason(text: str, heading: str | None, reason: str) -> None:
    assert boilerplate_reason(text, heading) == reason


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        (TITLE_PAGE_WITH_NOTICE, None),
        (PROSE_ABOUT_AN_INDEX, None),
        (PROSE_ABOUT_AN_INDEX, "Reports > Index"),
        (SPEC_TABLE, None),
        (NUMBERED_STEPS, None),
        (PRICE_LIST, None),
        (CHINESE_CONTENT, None),
        ("Contents of the box: the robot, the dock, two side brushes.", "Contents"),
        ("", None),
    ],
    ids=[
        "title-page-notice",
        "prose-index",
        "prose-index-heading",
        "specs",
        "steps",
        "prices",
        "zh-content",
        "box-contents",
        "empty",
    ],
)
def test_leaves_content_alone(text: str, heading: str | None) -> None:
    assert boilerplate_reason(text, heading) is None


def test_a_licence_heading_names_the_licence_of_its_section() -> None:
    body = "Everyone is permitted to copy and distribute verbatim copies of this license document."
    assert boilerplate_reason(body, "Appendix > GNU Free Documentation License") == "licence text (GNU FDL)"
    assert boilerplate_reason(body, "Appendix > Shipping") is None  # no licence named: legal words alone are not enough


def test_a_short_licence_notice_alone_on_a_page_is_licence_text() -> None:
    notice = TITLE_PAGE_WITH_NOTICE.splitlines()[-2:]
    assert boilerplate_reason("\n".join(notice)) == "licence text (GNU FDL)"


def test_too_few_entries_are_not_a_table_of_contents() -> None:
    assert boilerplate_reason("Contents\nGetting started ........ 1\nCharging ........ 4\n") is None
