# Small, quick runs of each lesson: the suite's smoke runs and the docs' figures use them.
set(WORKBOOK_QUICK_FLAGS_01 --size 16)
set(WORKBOOK_QUICK_FLAGS_02 --max-size 32 --traces)
set(WORKBOOK_QUICK_FLAGS_03 --size 16 --large 64)
set(WORKBOOK_QUICK_FLAGS_04 --size 64 --features 16)
set(WORKBOOK_QUICK_FLAGS_05 --size 2 --dim 16 --hidden 32)
set(WORKBOOK_QUICK_FLAGS_06 --size 16 --iterations 50 --dim 16 --hidden 32 --tokens 8)
set(WORKBOOK_QUICK_FLAGS_07 --size 256 --iterations 5)
set(WORKBOOK_QUICK_FLAGS_08 --size 16 --dim 16 --hidden 32)
set(WORKBOOK_QUICK_FLAGS_09 --size 32 --dim 16 --hidden 64)
set(WORKBOOK_QUICK_FLAGS_10 --size 32 --dim 32 --heads 2)
# The docs' figures: the quick flags unless a lesson needs more to show its point. Lesson 02's
# figure must span both regimes and the crossover: seven sizes, 16 to 1024 (about 10 s here).
foreach(n 01 02 03 04 05 06 07 08 09 10)
  set(WORKBOOK_DOCS_FLAGS_${n} ${WORKBOOK_QUICK_FLAGS_${n}})
endforeach()
set(WORKBOOK_DOCS_FLAGS_02 --sizes 16,32,64,128,256,512,1024 --traces)
set(WORKBOOK_DOCS_FLAGS_10 --size 128 --dim 128 --heads 4)
