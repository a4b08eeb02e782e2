print("hotfolder")
