# Small, quick runs of each lesson: the suite's smoke runs and the docs' figures use them.
set(WORKBOOK_QUICK_FLAGS_01 --size 16)
set(WORKBOOK_QUICK_FLAGS_02 --max-size 32 --traces)
set(WORKBOOK_QUICK_FLAGS_03 --size 16 --large 64)
set(WORKBOOK_QUICK_FLAGS_04 --size 64 --features 16)
set(WORKBOOK_QUICK_FLAGS_05 --size 2 --dim 16 --hidden 32)
set(WORKBOOK_QUICK_FLAGS_06 --size 16 --iterations 50 --dim 16 --hidden 32 --tokens 8)
set(WORKBOOK_QUICK_FLAGS_07 --size 256 --iterations 5)
