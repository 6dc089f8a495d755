#include "workbook_doctest.h"
