// Annotation summary pages laid out with pango and written as PDF by cairo.
#ifndef HOTFOLDER_SUMMARYSHIM_H
#define HOTFOLDER_SUMMARYSHIM_H
int hs_placeholder(void);
#endif
