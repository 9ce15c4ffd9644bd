show "$GRAPHS/vgg16.json" vgg16-linearized-greedy.plan.json
