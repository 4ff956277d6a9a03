#!/usr/bin/env python3
"""Decode vectors from CPython 3.11: what the reference does with source bytes.

Pipeline (as observed from the reference): importlib.util.decode_source(bytes) (=
tokenize.detect_encoding + strict decode + universal newlines), then compile() refuses NULs.
Output: JSON list of {"hex": input, "text": decoded} or {"hex": input, "error": true}.
"""
import importlib.util, json, sys

cases = [
    b"", b"x = 1\n", b"\xef\xbb\xbfx = 1\n", b"\xef\xbb\xbf",
    b"# \xff\nx=1\n", b"x=1 # \xff\n", b"s='\xff'\n", b"x=1\ny=2\n# \xff\n",
    b"# coding: latin-1\ns='\xe9'\n", b"# coding: latin-1", b"# -*- coding: iso-8859-15 -*-\ns='\xa4'\n",
    b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\ns='\xe9'\n",
    b"x = 1\n# coding: latin-1\ns='\xe9'\n", b"\n# coding: latin-1\ns='\xe9'\n", b"   \n#coding=latin-1\ns='\xe9'\n",
    b"\r# coding: latin-1\ns='\xe9'\n", b"\n\n# coding: latin-1\ns='\xe9'\n",
    b"\xef\xbb\xbf# coding: latin-1\n", b"\xef\xbb\xbf# coding: utf8\n", b"\xef\xbb\xbf# coding: utf-8\nx='\xc3\xa9'\n",
    b"\xef\xbb\xbf# coding: UTF_8\n", b"\xef\xbb\xbf\n# coding: latin-1\n", b"# coding: foo\n", b"# coding: utf-8-foo\n",
    b"# coding: latin-1-x\ns='\xe9'\n", b"# coding: LATIN_1\ns='\xe9'\n", b"# coding: Latin1\ns='\xe9'\n", b"# coding: l1\ns='\xe9'\n",
    b"# coding: cp1252\ns='\x80'\n", b"# coding: cp1252\ns='\x81'\n", b"# coding: windows-1252\ns='\x9f'\n",
    b"# coding: ascii\ns='\xe9'\n", b"# coding: ascii\ns='e'\n", b"# coding: us-ascii\n", b"# coding: koi8-r\ns='\xc1'\n",
    b"# coding: koi8_u\ns='\xae'\n", b"# coding: cp437\ns='\x80'\n", b"# coding: mac-roman\ns='\x80'\n",
    b"# coding: iso8859-3\ns='\xa5'\n", b"# coding: iso-8859-2\ns='\xb1'\n", b"# coding: tis-620\ns='\xa1'\n",
    b"# coding: euc-jp\ns='\xc6\xfc\xcb\xdc'\n", b"# coding: shift_jis\ns='\x93\xfa\x96{'\n", b"# coding: sjis\ns='\x82\xa0'\n",
    b"# coding: gb2312\ns='\xd6\xd0\xce\xc4'\n", b"# coding: gbk\ns='\x81\x40'\n", b"# coding: big5\ns='\xa4\xa4'\n",
    b"# coding: euc-kr\ns='\xc7\xd1'\n", b"# coding: euc-jp\ns='\xff\xff'\n",
    b"# coding: rot13\n", b"# coding: base64\n", b"# coding: hex\n",
    b"# coding: utf-16\n", b"x = 1\r\ny = 2\r\n", b"x = 1\ry = 2\r", b"x = '''a\r\nb\rc'''\n", b"x = 1\r",
    b"x = 1\r\r\n", b"x=1\x00\n", b"# \x00\n", b"x = 1\n\x00", b"# coding: latin-1\n\x00",
    b"# coding:\n", b"# coding: \n", b"# codingcoding: latin-1\ns='\xe9'\n", b"# coding=utf-8\n", b"#coding:utf-8 trailing\n",
    b"x = 1 # coding: latin-1\ns='\xe9'\n", b"\t\x0c# coding: latin-1\ns='\xe9'\n", b"# coding: latin-1 \xe9\n",
    b"# coding : latin-1\ns='\xe9'\n", b"# encoding: latin-1\ns='\xe9'\n", b"# xcoding:latin-1\ns='\xe9'\n",
    b"# coding: iso_8859_1\ns='\x80'\n", b"# coding: 8859\ns='\xe9'\n", b"# coding: cp65001\ns='\xc3\xa9'\n",
    b"# coding: utf_8_sig\n", b"# coding: U8\n", b"# coding: latin.1\n", b"# coding: iso.8859.1\n",
    b"s='\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'\n", b"s='\xed\xa0\x80'\n", b"s='\xc0\x80'\n", b"s='\xf4\x90\x80\x80'\n",
    b"s='\xe2\x82'", b"\xef\xbb", b"#\n#\n# coding: latin-1\ns='\xe9'\n", b"#\r\n# coding: latin-1\r\ns='\xe9'\r\n",
    b"# coding: latin-1\r# second\rs='\xe9'\n", b"x=1\n" * 3 + b"\xc3",
]
out = []
for raw in cases:
    entry = {"hex": raw.hex()}
    try:
        text = importlib.util.decode_source(raw)
        if "\x00" in text:
            raise SyntaxError("source code string cannot contain null bytes")
        entry["text"] = text
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        entry["error"] = True
        entry["cpython"] = f"{type(exc).__name__}: {exc}"
    out.append(entry)
json.dump(out, sys.stdout, ensure_ascii=False, indent=0)
sys.stdout.write("\n")
