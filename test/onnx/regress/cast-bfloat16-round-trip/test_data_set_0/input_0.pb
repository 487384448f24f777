B
reducesu_2JLƒÀ