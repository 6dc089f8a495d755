// Gives the precompiled header a target to be built for; see workbook_pch.h.
